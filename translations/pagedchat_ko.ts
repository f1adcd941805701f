<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ko" sourcelanguage="en">
<context>
    <name>ApiServerController</name>
    <message>
        <source>The server was not started: %1 needs an API key.</source>
        <translation>서버를 시작하지 않았습니다: %1에는 API 키가 필요합니다.</translation>
    </message>
    <message>
        <source>The server was not started: %1</source>
        <translation>서버를 시작하지 않았습니다: %1</translation>
    </message>
    <message>
        <source>Enter the address to listen on, e.g. 127.0.0.1.</source>
        <translation>수신할 주소를 입력하세요 (예: 127.0.0.1).</translation>
    </message>
    <message>
        <source>The port must be between 0 and 65535.</source>
        <translation>포트는 0에서 65535 사이여야 합니다.</translation>
    </message>
    <message>
        <source>%1 can be reached from other machines: tick &quot;Allow other machines&quot; to serve there.</source>
        <translation>%1은(는) 다른 컴퓨터에서 접근할 수 있습니다: 그곳에서 제공하려면 &quot;다른 컴퓨터 허용&quot;을 선택하세요.</translation>
    </message>
    <message>
        <source>Serving to other machines needs an API key.</source>
        <translation>다른 컴퓨터에 제공하려면 API 키가 필요합니다.</translation>
    </message>
    <message>
        <source>The server could not start on %1:%2: %3</source>
        <translation>%1:%2에서 서버를 시작할 수 없습니다: %3</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a web page&apos;s origin: write scheme://host[:port], e.g. http://localhost:3000, or * for any page.</source>
        <translation>&apos;%1&apos;은(는) 웹 페이지의 출처(origin)가 아닙니다: scheme://host[:port] 형식으로 쓰세요 (예: http://localhost:3000). 모든 페이지를 허용하려면 *를 쓰세요.</translation>
    </message>
</context>
<context>
    <name>AppController</name>
    <message>
        <source>OpenAI API server (Settings &gt; Server): %1</source>
        <translation>OpenAI API 서버 (설정 &gt; 서버): %1</translation>
    </message>
    <message>
        <source>Pane %1 answers with the main model: %2</source>
        <translation>창 %1은(는) 기본 모델로 답합니다: %2</translation>
    </message>
</context>
<context>
    <name>AppOptions</name>
    <message>
        <source>Chat with a local language model.</source>
        <translation>로컬 언어 모델과 대화합니다.</translation>
    </message>
    <message>
        <source>Model file or folder (default: $PAGEDCHAT_MODEL, else %1).</source>
        <translation>모델 파일 또는 폴더 (기본값: $PAGEDCHAT_MODEL, 없으면 %1).</translation>
    </message>
    <message>
        <source>Sentencepiece tokenizer model (default: beside the model).</source>
        <translation>SentencePiece 토크나이저 모델 (기본값: 모델과 같은 위치).</translation>
    </message>
    <message>
        <source>Folder for the chat database (default: %1).</source>
        <translation>대화 데이터베이스 폴더 (기본값: %1).</translation>
    </message>
    <message>
        <source>Chat template: auto (the model&apos;s own), a built-in (llama-2, mistral, chatml, zephyr, vicuna, llama3, deepseek-r1, phi3, gemma, gemma4, none) or a .jinja file.</source>
        <translation>채팅 템플릿: auto(모델 자체 템플릿), 내장 템플릿(llama-2, mistral, chatml, zephyr, vicuna, llama3, deepseek-r1, phi3, gemma, gemma4, none) 또는 .jinja 파일.</translation>
    </message>
    <message>
        <source>Where the model runs: cpu, cuda, cuda:N or auto (default: cpu).</source>
        <translation>모델을 실행할 장치: cpu, cuda, cuda:N 또는 auto (기본값: cpu).</translation>
    </message>
</context>
<context>
    <name>AppToolBar</name>
    <message>
        <source>System</source>
        <translation>시스템</translation>
    </message>
    <message>
        <source>Main tool bar</source>
        <translation>기본 도구 모음</translation>
    </message>
    <message>
        <source>Hide the conversation list</source>
        <translation>대화 목록 숨기기</translation>
    </message>
    <message>
        <source>Show the conversation list</source>
        <translation>대화 목록 보기</translation>
    </message>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>Language: %1</source>
        <translation>언어: %1</translation>
    </message>
    <message>
        <source>Choose the language</source>
        <translation>언어 선택</translation>
    </message>
    <message>
        <source>The language of PagedChat; System follows the system settings</source>
        <translation>PagedChat의 표시 언어입니다. 시스템 설정을 고르면 시스템 언어를 따릅니다</translation>
    </message>
    <message>
        <source>+ Add pane</source>
        <translation>+ 창 추가</translation>
    </message>
    <message>
        <source>Add a chat pane</source>
        <translation>대화 창 추가</translation>
    </message>
    <message>
        <source>Open another chat side by side (up to %1)</source>
        <translation>다른 대화를 나란히 엽니다 (최대 %1개)</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n panes</source>
        <translation>
            <numerusform>창 %1/%n개</numerusform>
        </translation>
    </message>
    <message>
        <source>Model: loading %1…</source>
        <translation>모델: %1 불러오는 중…</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>모델: %1</translation>
    </message>
    <message>
        <source>Model: none</source>
        <translation>모델: 없음</translation>
    </message>
    <message>
        <source>Choose the model</source>
        <translation>모델 선택</translation>
    </message>
    <message>
        <source>Open a model, load a recent one, or unload it (Ctrl+O)</source>
        <translation>모델을 열거나, 최근 모델을 불러오거나, 모델을 내립니다 (Ctrl+O)</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>엔진</translation>
    </message>
    <message>
        <source>Show the live engine view</source>
        <translation>실시간 엔진 보기 열기</translation>
    </message>
    <message>
        <source>Requests, KV-cache blocks and speed, live (Ctrl+Shift+E)</source>
        <translation>요청, KV 캐시 블록, 속도를 실시간으로 봅니다 (Ctrl+Shift+E)</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>설정</translation>
    </message>
    <message>
        <source>Settings (Ctrl+,)</source>
        <translation>설정 (Ctrl+,)</translation>
    </message>
</context>
<context>
    <name>AppearancePage</name>
    <message>
        <source>Appearance</source>
        <translation>모양</translation>
    </message>
    <message>
        <source>System</source>
        <translation>시스템</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>밝게</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>어둡게</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>테마</translation>
    </message>
    <message>
        <source>Font size</source>
        <translation>글자 크기</translation>
    </message>
    <message>
        <source>Font size in pixels</source>
        <translation>글자 크기(픽셀)</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>언어</translation>
    </message>
    <message>
        <source>System follows the desktop&apos;s light or dark colours. Shortcuts: Ctrl+N new chat, Ctrl+Shift+N new pane, Ctrl+W close pane, Enter send, Shift+Enter new line, Esc stop, Ctrl+, settings.</source>
        <translation>시스템은 데스크톱의 밝은 색 또는 어두운 색을 따릅니다. 단축키: Ctrl+N 새 대화, Ctrl+Shift+N 새 창, Ctrl+W 창 닫기, Enter 보내기, Shift+Enter 줄 바꿈, Esc 중지, Ctrl+, 설정.</translation>
    </message>
</context>
<context>
    <name>BlindCompare</name>
    <message>
        <source>Vote once every pane has finished its answer.</source>
        <translation>모든 창의 답이 끝난 뒤에 투표하세요.</translation>
    </message>
    <message>
        <source>Pane %1 is not part of this comparison.</source>
        <translation>창 %1은 이 비교에 들어 있지 않습니다.</translation>
    </message>
    <message>
        <source>The vote could not be saved: %1</source>
        <translation>투표를 저장하지 못했습니다: %1</translation>
    </message>
</context>
<context>
    <name>ChatInput</name>
    <message>
        <source>Message input area</source>
        <translation>메시지 입력 영역</translation>
    </message>
    <message>
        <source>Type a message…</source>
        <translation>메시지 입력…</translation>
    </message>
    <message>
        <source>Message for pane %1</source>
        <translation>창 %1의 메시지</translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter adds a line</source>
        <translation>Enter로 보내고, Shift+Enter로 줄을 바꿉니다</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>중지</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>보내기</translation>
    </message>
    <message>
        <source>Stop generating in pane %1</source>
        <translation>창 %1의 생성 중지</translation>
    </message>
    <message>
        <source>Send message in pane %1</source>
        <translation>창 %1에서 메시지 보내기</translation>
    </message>
    <message>
        <source>Enter to send · Shift+Enter for a new line</source>
        <translation>Enter: 보내기 · Shift+Enter: 줄 바꿈</translation>
    </message>
    <message>
        <source>Send message to all panes</source>
        <translation>모든 창에 메시지 보내기</translation>
    </message>
    <message>
        <source>Send to all panes</source>
        <translation>모든 창에 보내기</translation>
    </message>
    <message>
        <source>Enter sends the message to every pane at once</source>
        <translation>Enter를 누르면 메시지를 모든 창에 한꺼번에 보냅니다</translation>
    </message>
    <message>
        <source>Message…</source>
        <translation>메시지…</translation>
    </message>
    <message>
        <source>Shift+Enter: new line</source>
        <translation>Shift+Enter: 줄 바꿈</translation>
    </message>
    <message>
        <source>The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel).</source>
        <translation>파일 대화 상자를 열 수 없습니다(Qt Quick Dialogs 모듈이 없습니다. Debian에서는 qml6-module-qt-labs-folderlistmodel을 설치하세요).</translation>
    </message>
    <message>
        <source>Attach images</source>
        <translation>이미지 첨부</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.webp)</source>
        <translation>이미지 (*.png *.jpg *.jpeg *.webp)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>모든 파일 (*)</translation>
    </message>
    <message>
        <source>Attached image, %1 by %2 pixels</source>
        <translation>첨부한 이미지, %1×%2 픽셀</translation>
    </message>
    <message>
        <source>Remove image %1</source>
        <translation>이미지 %1 빼기</translation>
    </message>
    <message>
        <source>Remove this image</source>
        <translation>이 이미지 빼기</translation>
    </message>
    <message>
        <source>This model cannot read images: remove them to send.</source>
        <translation>이 모델은 이미지를 읽지 못합니다. 보내려면 이미지를 빼세요.</translation>
    </message>
    <message>
        <source>Attach an image in pane %1</source>
        <translation>창 %1에 이미지 첨부</translation>
    </message>
    <message>
        <source>Attach an image (PNG, JPEG or WebP)</source>
        <translation>이미지 첨부 (PNG, JPEG, WebP)</translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>Chat pane %1</source>
        <translation>대화 창 %1</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>새 대화</translation>
    </message>
    <message>
        <source>No model is loaded. Download one from Hugging Face, or open a model file or folder you have (Ctrl+O).</source>
        <translation>불러온 모델이 없습니다. Hugging Face에서 내려받거나, 가지고 있는 모델 파일이나 폴더를 여세요(Ctrl+O).</translation>
    </message>
    <message>
        <source>Download a model…</source>
        <translation>모델 내려받기…</translation>
    </message>
    <message>
        <source>Download a model from Hugging Face</source>
        <translation>Hugging Face에서 모델 내려받기</translation>
    </message>
    <message>
        <source>Open a model…</source>
        <translation>모델 열기…</translation>
    </message>
    <message>
        <source>Open a model file or folder</source>
        <translation>모델 파일이나 폴더 열기</translation>
    </message>
    <message numerus="yes">
        <source>The conversation outgrew the model&apos;s context: %n earlier message(s), dimmed above, were not sent. Settings, Engine chooses which ones go, or whether to stop instead.</source>
        <translation>
            <numerusform>대화가 모델의 컨텍스트보다 길어졌습니다. 위에 흐리게 표시된 이전 메시지 %n개는 보내지 않았습니다. 무엇을 뺄지, 아니면 멈출지는 설정의 엔진에서 고릅니다.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ChatStore</name>
    <message>
        <source>User</source>
        <translation>사용자</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>어시스턴트</translation>
    </message>
    <message>
        <source>System</source>
        <translation>시스템</translation>
    </message>
    <message>
        <source>(cut off)</source>
        <translation>(중간에 끊김)</translation>
    </message>
    <message>
        <source>Tool result</source>
        <translation>도구 결과</translation>
    </message>
    <message>
        <source>Tool call:</source>
        <translation>도구 호출:</translation>
    </message>
    <message>
        <source>[image: %1 x %2, %3]</source>
        <translation>[이미지: %1 x %2, %3]</translation>
    </message>
</context>
<context>
    <name>CompareBar</name>
    <message>
        <source>Blind compare</source>
        <translation>블라인드 비교</translation>
    </message>
    <message>
        <source>Compare the panes&apos; answers without knowing their settings.</source>
        <translation>설정을 모른 채 창들의 답을 비교합니다.</translation>
    </message>
    <message>
        <source>Waiting for every pane to finish…</source>
        <translation>모든 창이 끝나기를 기다리는 중…</translation>
    </message>
    <message>
        <source>Which answer is better?</source>
        <translation>어느 답이 더 나은가요?</translation>
    </message>
    <message>
        <source>You voted a tie. Settings are shown again.</source>
        <translation>무승부로 투표했습니다. 설정이 다시 보입니다.</translation>
    </message>
    <message>
        <source>You picked %1 (pane %2). Settings are shown again.</source>
        <translation>%1(창 %2)을 골랐습니다. 설정이 다시 보입니다.</translation>
    </message>
    <message>
        <source>Type a prompt: it goes to every pane; labels are shuffled.</source>
        <translation>프롬프트를 입력하세요. 모든 창에 보내지고 이름표는 섞입니다.</translation>
    </message>
    <message>
        <source>Blind compare mode</source>
        <translation>블라인드 비교 모드</translation>
    </message>
    <message>
        <source>%1 is better</source>
        <translation>%1 답변이 더 나음</translation>
    </message>
    <message>
        <source>Tie</source>
        <translation>무승부</translation>
    </message>
    <message>
        <source>Both are as good: tie</source>
        <translation>둘 다 비슷함: 무승부</translation>
    </message>
</context>
<context>
    <name>ConversationDelegate</name>
    <message>
        <source>Open conversation %1</source>
        <translation>대화 열기: %1</translation>
    </message>
    <message>
        <source>d MMM, hh:mm</source>
        <extracomment>Date format of a conversation&apos;s last activity (QDateTime format: day, month, time)</extracomment>
        <translation>M월 d일 HH:mm</translation>
    </message>
    <message>
        <source>Last activity %1</source>
        <translation>마지막 활동 %1</translation>
    </message>
    <message>
        <source>Delete conversation %1</source>
        <translation>대화 삭제: %1</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>대화 삭제</translation>
    </message>
    <message>
        <source>New title</source>
        <translation>새 제목</translation>
    </message>
    <message>
        <source>Pinned: %1</source>
        <translation>고정됨: %1</translation>
    </message>
    <message>
        <source>Actions for conversation %1</source>
        <translation>대화 %1 작업</translation>
    </message>
    <message>
        <source>Rename, pin, export, delete</source>
        <translation>이름 바꾸기, 고정, 내보내기, 삭제</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>이름 바꾸기</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>고정 해제</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>고정</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>Markdown으로 내보내기…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>JSON으로 내보내기…</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>삭제</translation>
    </message>
    <message>
        <source>d MMM yyyy, hh:mm</source>
        <extracomment>Date format of a conversation&apos;s last activity in another year (QDateTime format: day, month, year, time)</extracomment>
        <translation>yyyy년 M월 d일 HH:mm</translation>
    </message>
</context>
<context>
    <name>ConversationList</name>
    <message>
        <source>Conversations</source>
        <translation>대화</translation>
    </message>
    <message>
        <source>Chats</source>
        <translation>대화 목록</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>새 대화</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>새 대화 시작</translation>
    </message>
    <message>
        <source>Conversation list</source>
        <translation>대화 목록</translation>
    </message>
    <message>
        <source>Scroll conversations</source>
        <translation>대화 목록 스크롤</translation>
    </message>
    <message>
        <source>No conversations yet. Type a message in a pane to start one.</source>
        <translation>아직 대화가 없습니다. 창에 메시지를 입력해 대화를 시작하세요.</translation>
    </message>
    <message>
        <source>Export conversation as JSON</source>
        <translation>대화를 JSON으로 내보내기</translation>
    </message>
    <message>
        <source>Export conversation as Markdown</source>
        <translation>대화를 Markdown으로 내보내기</translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON 파일 (*.json)</translation>
    </message>
    <message>
        <source>Markdown files (*.md)</source>
        <translation>Markdown 파일 (*.md)</translation>
    </message>
    <message>
        <source>Import a conversation (PagedChat JSON)</source>
        <translation>대화 가져오기 (PagedChat JSON)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>모든 파일 (*)</translation>
    </message>
    <message>
        <source>Search chats</source>
        <translation>채팅 검색</translation>
    </message>
    <message>
        <source>Search all chats (Ctrl+F)</source>
        <translation>모든 채팅 검색 (Ctrl+F)</translation>
    </message>
    <message>
        <source>Import conversation</source>
        <translation>대화 가져오기</translation>
    </message>
    <message>
        <source>Import a conversation from a JSON file</source>
        <translation>JSON 파일에서 대화 가져오기</translation>
    </message>
    <message>
        <source>Deleted “%1”</source>
        <translation>“%1” 삭제됨</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>실행 취소</translation>
    </message>
    <message>
        <source>Undo delete</source>
        <translation>삭제 취소</translation>
    </message>
    <message>
        <source>The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel).</source>
        <translation>파일 대화 상자를 열 수 없습니다(Qt Quick Dialogs 모듈이 없습니다. Debian에서는 qml6-module-qt-labs-folderlistmodel을 설치하세요).</translation>
    </message>
    <message>
        <source>Deleted “%1” (+%2 more)</source>
        <translation>“%1” 삭제됨 (외 %2개)</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>저장</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>가져오기</translation>
    </message>
</context>
<context>
    <name>ConversationListModel</name>
    <message>
        <source>Pinned</source>
        <translation>고정됨</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>오늘</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>어제</translation>
    </message>
    <message>
        <source>Previous 7 days</source>
        <translation>지난 7일</translation>
    </message>
    <message>
        <source>Older</source>
        <translation>이전</translation>
    </message>
</context>
<context>
    <name>DownloadController</name>
    <message>
        <source>Hugging Face folder</source>
        <translation>Hugging Face 폴더</translation>
    </message>
    <message>
        <source>Download stopped; downloading again resumes it.</source>
        <translation>내려받기를 멈췄습니다. 다시 내려받으면 이어서 받습니다.</translation>
    </message>
    <message>
        <source>%1 GB</source>
        <translation>%1 GB</translation>
    </message>
    <message>
        <source>%1 MB</source>
        <translation>%1 MB</translation>
    </message>
    <message>
        <source>%1 kB</source>
        <translation>%1 kB</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1바이트</translation>
    </message>
    <message>
        <source>Starting the download…</source>
        <translation>내려받기를 시작하는 중…</translation>
    </message>
    <message>
        <source>No repository with GGUF files matches.</source>
        <translation>일치하는 GGUF 저장소가 없습니다.</translation>
    </message>
    <message>
        <source>%1 of %2, %3/s</source>
        <translation>%2 중 %1, 초당 %3</translation>
    </message>
    <message>
        <source>Downloaded and checked: %1</source>
        <translation>내려받고 확인했습니다: %1</translation>
    </message>
</context>
<context>
    <name>DownloadDialog</name>
    <message>
        <source>Download a model</source>
        <translation>모델 내려받기</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>닫기</translation>
    </message>
    <message>
        <source>Close the download dialog</source>
        <translation>내려받기 창 닫기</translation>
    </message>
    <message>
        <source>Search, or paste a repository (e.g. Qwen/Qwen3-4B-GGUF)</source>
        <translation>검색하거나 저장소를 붙여 넣으세요(예: Qwen/Qwen3-4B-GGUF)</translation>
    </message>
    <message>
        <source>Search the Hugging Face hub</source>
        <translation>Hugging Face 허브 검색</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>검색</translation>
    </message>
    <message>
        <source>Repositories found</source>
        <translation>찾은 저장소</translation>
    </message>
    <message>
        <source>%1 (gated)</source>
        <translation>%1 (접근 승인 필요)</translation>
    </message>
    <message>
        <source>List the files of %1</source>
        <translation>%1의 파일 보기</translation>
    </message>
    <message>
        <source>Back to results</source>
        <translation>검색 결과로</translation>
    </message>
    <message>
        <source>Files of %1</source>
        <translation>%1의 파일</translation>
    </message>
    <message>
        <source>%1, %2%3%4</source>
        <translation>%1, %2%3%4</translation>
    </message>
    <message>
        <source>, may not fit this computer</source>
        <translation>, 이 컴퓨터에 맞지 않을 수 있음</translation>
    </message>
    <message>
        <source>, recommended</source>
        <translation>, 추천</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>맞음</translation>
    </message>
    <message>
        <source>may not fit</source>
        <translation>맞지 않을 수 있음</translation>
    </message>
    <message>
        <source>recommended</source>
        <translation>추천</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>내려받기</translation>
    </message>
    <message>
        <source>Download the chosen file</source>
        <translation>고른 파일 내려받기</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>중지</translation>
    </message>
    <message>
        <source>Stop the download</source>
        <translation>내려받기 중지</translation>
    </message>
    <message>
        <source>Load it</source>
        <translation>불러오기</translation>
    </message>
    <message>
        <source>Load the downloaded model</source>
        <translation>내려받은 모델 불러오기</translation>
    </message>
    <message>
        <source>Download progress</source>
        <translation>내려받기 진행률</translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation>이 컴퓨터에 있는 모델 (%1)</translation>
    </message>
    <message>
        <source>Downloaded models</source>
        <translation>내려받은 모델</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>Load %1</source>
        <translation>%1 불러오기</translation>
    </message>
    <message>
        <source>No model downloaded yet.</source>
        <translation>아직 내려받은 모델이 없습니다.</translation>
    </message>
    <message numerus="yes">
        <source>%n download(s)</source>
        <translation>
            <numerusform>내려받기 %n회</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n file(s)</source>
        <translation>
            <numerusform>파일 %n개</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>EngineSettings</name>
    <message>
        <source>Engine settings</source>
        <translation>엔진 설정</translation>
    </message>
    <message>
        <source>KV cache size (MiB, 0 = automatic)</source>
        <translation>KV 캐시 크기 (MiB, 0 = 자동)</translation>
    </message>
    <message>
        <source>KV cache size in MiB</source>
        <translation>KV 캐시 크기 (MiB)</translation>
    </message>
    <message>
        <source>Max concurrent sequences</source>
        <translation>최대 동시 시퀀스 수</translation>
    </message>
    <message>
        <source>Maximum concurrent sequences</source>
        <translation>최대 동시 시퀀스 수</translation>
    </message>
    <message>
        <source>Block size (tokens per KV block)</source>
        <translation>블록 크기 (KV 블록당 토큰 수)</translation>
    </message>
    <message>
        <source>Block size in tokens</source>
        <translation>블록 크기 (토큰)</translation>
    </message>
    <message>
        <source>CPU threads (0 = all cores)</source>
        <translation>CPU 스레드 (0 = 모든 코어)</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 스레드</translation>
    </message>
    <message>
        <source>Applying reloads the model: replies in progress are stopped and keep their text so far.</source>
        <translation>적용하면 모델을 다시 불러옵니다. 진행 중인 응답은 중지되며 지금까지의 내용은 유지됩니다.</translation>
    </message>
    <message>
        <source>Reloading the model… %1%</source>
        <translation>모델을 다시 불러오는 중… %1%</translation>
    </message>
    <message>
        <source>The model did not load with these settings: %1</source>
        <translation>이 설정으로는 모델을 불러오지 못했습니다: %1</translation>
    </message>
    <message>
        <source>Saved; they apply when a model is loaded.</source>
        <translation>저장했습니다. 모델을 불러올 때 적용됩니다.</translation>
    </message>
    <message>
        <source>Model load progress</source>
        <translation>모델 불러오기 진행률</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>되돌리기</translation>
    </message>
    <message>
        <source>Reset the engine settings to the saved values</source>
        <translation>엔진 설정을 저장된 값으로 되돌리기</translation>
    </message>
    <message>
        <source>Apply and reload</source>
        <translation>적용하고 다시 불러오기</translation>
    </message>
    <message>
        <source>Apply the engine settings and reload the model</source>
        <translation>엔진 설정을 적용하고 모델을 다시 불러오기</translation>
    </message>
    <message>
        <source>The KV cache size must be between 0 (automatic) and %1 MiB (half the memory); %2 MiB was given.</source>
        <translation>KV 캐시 크기는 0(자동)에서 %1 MiB(메모리의 절반) 사이여야 합니다. 입력한 값: %2 MiB.</translation>
    </message>
    <message>
        <source>The number of concurrent sequences must be between 1 and %1; %2 was given.</source>
        <translation>동시 시퀀스 수는 1에서 %1 사이여야 합니다. 입력한 값: %2.</translation>
    </message>
    <message>
        <source>The block size must be between 1 and %1 tokens; %2 was given.</source>
        <translation>블록 크기는 1에서 %1 토큰 사이여야 합니다. 입력한 값: %2.</translation>
    </message>
    <message>
        <source>The number of CPU threads must be between 0 (all cores) and %1; %2 was given.</source>
        <translation>CPU 스레드 수는 0(모든 코어)에서 %1 사이여야 합니다. 입력한 값: %2.</translation>
    </message>
    <message>
        <source>KV cache size (MiB) too small for this model: it cannot hold one full-length sequence.</source>
        <translation>KV 캐시 크기(MiB)가 이 모델에 너무 작습니다: 최대 길이 시퀀스 하나도 담을 수 없습니다.</translation>
    </message>
    <message>
        <source>KV cache size (MiB) too small for this model: needs at least %1 MiB for one full-length sequence.</source>
        <translation>KV 캐시 크기(MiB)가 이 모델에 너무 작습니다: 최대 길이 시퀀스 하나에 최소 %1 MiB가 필요합니다.</translation>
    </message>
    <message numerus="yes">
        <source>Applied: %n KV block(s).</source>
        <translation>
            <numerusform>적용됨: KV 블록 %n개.</numerusform>
        </translation>
    </message>
    <message>
        <source>KV cache type</source>
        <translation>KV 캐시 형식</translation>
    </message>
    <message>
        <source>Automatic (bfloat16)</source>
        <translation>자동 (bfloat16)</translation>
    </message>
    <message>
        <source>float32 (exact, 4 bytes per value)</source>
        <translation>float32 (정확, 값당 4바이트)</translation>
    </message>
    <message>
        <source>bfloat16 (2 bytes per value)</source>
        <translation>bfloat16 (값당 2바이트)</translation>
    </message>
    <message>
        <source>float16 (2 bytes per value)</source>
        <translation>float16 (값당 2바이트)</translation>
    </message>
    <message>
        <source>q8_0 (about 1 byte per value; head sizes of multiples of 32)</source>
        <translation>q8_0 (값당 약 1바이트, 헤드 크기가 32의 배수일 때)</translation>
    </message>
    <message>
        <source>KV cache element type</source>
        <translation>KV 캐시 요소 형식</translation>
    </message>
    <message>
        <source>The KV cache type must be one of %1; &quot;%2&quot; was given.</source>
        <translation>KV 캐시 형식은 %1 중 하나여야 합니다. &quot;%2&quot;이(가) 입력되었습니다.</translation>
    </message>
    <message>
        <source>Context length (tokens, 0 = the model&apos;s)</source>
        <translation>컨텍스트 길이(토큰, 0 = 모델 기본값)</translation>
    </message>
    <message>
        <source>Context length in tokens</source>
        <translation>토큰 단위 컨텍스트 길이</translation>
    </message>
    <message>
        <source>When a conversation outgrows the context</source>
        <translation>대화가 컨텍스트보다 길어지면</translation>
    </message>
    <message>
        <source>Drop the oldest turns</source>
        <translation>가장 오래된 대화부터 빼기</translation>
    </message>
    <message>
        <source>Keep the system prompt and first turn, drop the next</source>
        <translation>시스템 프롬프트와 첫 대화는 두고 그다음부터 빼기</translation>
    </message>
    <message>
        <source>Stop: send nothing</source>
        <translation>멈추기: 보내지 않음</translation>
    </message>
    <message>
        <source>The context length must be 0 (the model&apos;s) or between 16 and %1 tokens; %2 was given.</source>
        <translation>컨텍스트 길이는 0(모델 기본값)이거나 16~%1 토큰이어야 합니다. 입력한 값: %2.</translation>
    </message>
    <message>
        <source>Draft model for speculative decoding (optional: a smaller model with the same vocabulary; panes choose it under Draft tokens)</source>
        <translation>추측 디코딩용 초안 모델 (선택: 같은 어휘를 쓰는 더 작은 모델; 창마다 초안 토큰에서 고릅니다)</translation>
    </message>
    <message>
        <source>Path of a model file or folder</source>
        <translation>모델 파일이나 폴더의 경로</translation>
    </message>
    <message>
        <source>Draft model path</source>
        <translation>초안 모델 경로</translation>
    </message>
    <message>
        <source>The draft model &quot;%1&quot; does not exist: give a model file or folder, or leave it empty.</source>
        <translation>초안 모델 &quot;%1&quot;이(가) 없습니다. 모델 파일이나 폴더를 지정하거나 비워 두세요.</translation>
    </message>
</context>
<context>
    <name>EngineView</name>
    <message>
        <source>Engine view</source>
        <translation>엔진 보기</translation>
    </message>
    <message>
        <source>%1 running · %2 waiting · KV blocks: %3 used, %4 free, %5 cached, of %6 · %7 shared · prefix-cache hit rate %8</source>
        <translation>실행 %1 · 대기 %2 · KV 블록: 사용 %3, 비어 있음 %4, 캐시됨 %5, 전체 %6 · 공유 %7 · 프리픽스 캐시 적중률 %8</translation>
    </message>
    <message>
        <source>Pane %1</source>
        <translation>창 %1</translation>
    </message>
    <message>
        <source>Other request</source>
        <translation>다른 요청</translation>
    </message>
    <message>
        <source>Shared prefix (ref count &gt; 1)</source>
        <translation>공유 프리픽스 (참조 수 &gt; 1)</translation>
    </message>
    <message>
        <source>Free, kept in the prefix cache</source>
        <translation>비어 있음, 프리픽스 캐시에 보관</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>비어 있음</translation>
    </message>
    <message>
        <source>KV cache block map</source>
        <translation>KV 캐시 블록 맵</translation>
    </message>
    <message>
        <source>%1 of %2 blocks in use</source>
        <translation>블록 %2개 중 %1개 사용 중</translation>
    </message>
    <message>
        <source>Block %1</source>
        <translation>블록 %1</translation>
    </message>
    <message>
        <source>pane %1</source>
        <translation>창 %1</translation>
    </message>
    <message>
        <source>in use</source>
        <translation>사용 중</translation>
    </message>
    <message>
        <source>free</source>
        <translation>비어 있음</translation>
    </message>
    <message>
        <source>shared</source>
        <translation>공유됨</translation>
    </message>
    <message>
        <source>cached</source>
        <translation>캐시됨</translation>
    </message>
    <message>
        <source>Running and waiting requests</source>
        <translation>실행 중이거나 대기 중인 요청</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>요청</translation>
    </message>
    <message>
        <source>%1 · %2 · %3 · %4 prompt + %5 new tokens · %6 blocks</source>
        <translation>%1 · %2 · %3 · 프롬프트 %4 + 새 토큰 %5 · 블록 %6개</translation>
    </message>
    <message>
        <source>no pane</source>
        <translation>창 없음</translation>
    </message>
    <message>
        <source>running</source>
        <translation>실행 중</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>대기 중</translation>
    </message>
    <message>
        <source>No requests</source>
        <translation>요청 없음</translation>
    </message>
    <message>
        <source>Tokens/s (peak %1)</source>
        <translation>토큰/초 (최고 %1)</translation>
    </message>
    <message>
        <source>Tokens per second over time</source>
        <translation>시간에 따른 초당 토큰 수</translation>
    </message>
    <message>
        <source>server</source>
        <translation>서버</translation>
    </message>
    <message>
        <source>Recurrent state: %1 slots · %2 held by running requests · %3 prefix-cache checkpoints</source>
        <translation>순환 상태: 슬롯 %1개 · 실행 중인 요청이 %2개 사용 · 프리픽스 캐시 체크포인트 %3개</translation>
    </message>
    <message>
        <source>1 cell = %1 blocks: the share in use from the bottom, then the cached share</source>
        <translation>칸 하나 = 블록 %1개: 아래부터 사용 중인 비율, 그 위에 캐시된 비율</translation>
    </message>
</context>
<context>
    <name>EngineWorker</name>
    <message>
        <source>No model is loaded.</source>
        <translation>불러온 모델이 없습니다.</translation>
    </message>
    <message>
        <source>The message is %1 tokens long; the model&apos;s context holds %2.</source>
        <translation>메시지가 %1토큰으로, 모델의 컨텍스트 크기(%2토큰)를 넘습니다.</translation>
    </message>
    <message>
        <source>Engine error: %1</source>
        <translation>엔진 오류: %1</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>the conversation is %1 tokens long and the model&apos;s context holds %2 with room for the reply. Start a new chat, or let older turns go (Settings, Engine: when a conversation outgrows the context).</source>
        <translation>대화가 %1 토큰으로, 답변 공간을 포함한 모델의 컨텍스트(%2)에 들어가지 않습니다. 새 대화를 시작하거나, 이전 대화를 빼도록 설정하세요(설정, 엔진: 대화가 컨텍스트보다 길어지면).</translation>
    </message>
    <message>
        <source>The image projector beside the model was not loaded, so it reads no images: %1</source>
        <translation>모델 옆의 이미지 프로젝터를 불러오지 못해 이 모델은 이미지를 읽지 않습니다: %1</translation>
    </message>
    <message numerus="yes">
        <source>This model reads no images: the conversation&apos;s %n picture(s) were left out of what it read.</source>
        <translation>
            <numerusform>이 모델은 이미지를 읽지 않아 대화의 그림 %n개를 빼고 읽었습니다.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ErrorBanner</name>
    <message>
        <source>Dismiss error</source>
        <translation>오류 닫기</translation>
    </message>
    <message>
        <source>Hide details</source>
        <translation>자세히 숨기기</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>자세히</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>다시 시도</translation>
    </message>
    <message>
        <source>Retry saving the chat history</source>
        <translation>대화 기록 저장 다시 시도</translation>
    </message>
    <message>
        <source>Error details</source>
        <translation>오류 세부 정보</translation>
    </message>
</context>
<context>
    <name>ErrorWindow</name>
    <message>
        <source>PagedChat: cannot start</source>
        <translation>PagedChat: 시작할 수 없음</translation>
    </message>
    <message>
        <source>Error details</source>
        <translation>오류 세부 정보</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>종료</translation>
    </message>
    <message>
        <source>Quit PagedChat</source>
        <translation>PagedChat 종료</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>다시 시도</translation>
    </message>
    <message>
        <source>Try to start PagedChat again</source>
        <translation>PagedChat 다시 시작해 보기</translation>
    </message>
</context>
<context>
    <name>GeneratingChip</name>
    <message>
        <source>Generating</source>
        <translation>생성 중</translation>
    </message>
    <message>
        <source>Reading %1 / %2 tokens</source>
        <translation>토큰 %1 / %2 읽는 중</translation>
    </message>
    <message>
        <source>Tool calls</source>
        <translation>도구 호출</translation>
    </message>
</context>
<context>
    <name>HistoryController</name>
    <message>
        <source>New chat</source>
        <translation>새 대화</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>대화</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>%1에 쓸 수 없습니다: %2</translation>
    </message>
    <message>
        <source>%1 (file: %2)</source>
        <translation>%1 (파일: %2)</translation>
    </message>
    <message>
        <source>No file name was given for the export.</source>
        <translation>내보낼 파일 이름이 없습니다.</translation>
    </message>
    <message>
        <source>Cannot write %1: the folder %2 does not exist.</source>
        <translation>%1에 쓸 수 없습니다: 폴더 %2이(가) 없습니다.</translation>
    </message>
    <message>
        <source>Cannot write %1: it is a symbolic link (to %2); choose the file itself.</source>
        <translation>%1에 쓸 수 없습니다: 심볼릭 링크입니다(대상: %2). 파일 자체를 선택하세요.</translation>
    </message>
    <message>
        <source>it is not a regular file</source>
        <translation>일반 파일이 아닙니다</translation>
    </message>
    <message>
        <source>the file is larger than %1 MB</source>
        <translation>파일이 %1 MB보다 큽니다</translation>
    </message>
    <message>
        <source>Cannot import %1: %2</source>
        <translation>%1을(를) 가져올 수 없습니다: %2</translation>
    </message>
</context>
<context>
    <name>KeychainApiKeyStore</name>
    <message>
        <source>The system keychain is unavailable (%1).</source>
        <translation>시스템 키체인을 사용할 수 없습니다 (%1).</translation>
    </message>
</context>
<context>
    <name>LocalChatBackend</name>
    <message>
        <source>The model could not be loaded.</source>
        <translation>모델을 불러올 수 없습니다.</translation>
    </message>
    <message>
        <source>the model&apos;s own (%1 format)</source>
        <translation>모델 자체 템플릿(%1 형식)</translation>
    </message>
    <message numerus="yes">
        <source>%1: %2 layers, dim %3, vocab %4, weights %5, %n KV block(s), chat template %6</source>
        <translation>
            <numerusform>%1: 레이어 %2개, 차원 %3, 어휘 %4개, 가중치 %5, KV 블록 %n개, 채팅 템플릿 %6</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>LocalModels</name>
    <message>
        <source>There is no pane %1.</source>
        <translation>창 %1이(가) 없습니다.</translation>
    </message>
    <message>
        <source>%1 does not fit in memory beside the models loaded: its weights take %2, and %3 is available (%4 kept for the system). Close the panes that use another model, or pick a smaller one.</source>
        <translation>%1은(는) 이미 불러온 모델과 함께 메모리에 들어가지 않습니다: 가중치가 %2이고 사용할 수 있는 메모리는 %3입니다(시스템용으로 %4 남겨 둠). 다른 모델을 쓰는 창을 닫거나 더 작은 모델을 고르세요.</translation>
    </message>
    <message>
        <source>%1 is a %2 model, which PagedChat cannot run.</source>
        <translation>%1은(는) %2 모델이라 PagedChat에서 실행할 수 없습니다.</translation>
    </message>
    <message>
        <source>%1 cannot be opened as a model: %2</source>
        <translation>%1을(를) 모델로 열 수 없습니다: %2</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation>모델을 불러올 수 없습니다: %1</translation>
    </message>
    <message>
        <source>Scroll chat panes</source>
        <translation>대화 창 스크롤</translation>
    </message>
    <message>
        <source>PagedChat engine view</source>
        <translation>PagedChat 엔진 보기</translation>
    </message>
</context>
<context>
    <name>MessageActions</name>
    <message>
        <source>Edit message</source>
        <translation>메시지 편집</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Cancel editing</source>
        <translation>편집 취소</translation>
    </message>
    <message>
        <source>Save and send</source>
        <translation>저장하고 보내기</translation>
    </message>
    <message>
        <source>Save the edited message and send it</source>
        <translation>편집한 메시지를 저장하고 보내기</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>이전 버전</translation>
    </message>
    <message>
        <source>%1/%2</source>
        <extracomment>Which version of a message is shown: &quot;2/3&quot;</extracomment>
        <translation>%1/%2</translation>
    </message>
    <message>
        <source>Version %1 of %2</source>
        <translation>%2개 중 %1번째 버전</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>다음 버전</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>복사</translation>
    </message>
    <message>
        <source>Copy message</source>
        <translation>메시지 복사</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>복사됨</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>편집</translation>
    </message>
    <message>
        <source>Edit and resend message</source>
        <translation>메시지를 편집해서 다시 보내기</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>다시 생성</translation>
    </message>
    <message>
        <source>Regenerate answer</source>
        <translation>답변 다시 생성</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>이어 쓰기</translation>
    </message>
    <message>
        <source>Continue the cut-off answer</source>
        <translation>끊긴 답변 이어 쓰기</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>interrupted</source>
        <translation>중단됨</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>중지됨</translation>
    </message>
    <message>
        <source>length limit reached</source>
        <translation>길이 제한에 도달함</translation>
    </message>
    <message>
        <source>(no reply — interrupted)</source>
        <translation>(응답 없음 — 중단됨)</translation>
    </message>
    <message>
        <source>(no reply — stopped)</source>
        <translation>(응답 없음 — 중지됨)</translation>
    </message>
    <message>
        <source>(no reply)</source>
        <translation>(응답 없음)</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>나: %1</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>모델: %1</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>시스템 프롬프트</translation>
    </message>
    <message>
        <source>System prompt: %1</source>
        <translation>시스템 프롬프트: %1</translation>
    </message>
    <message>
        <source>(no reply — length limit reached)</source>
        <translation>(답변 없음 — 길이 제한 도달)</translation>
    </message>
    <message>
        <source>not sent: outside the model&apos;s context</source>
        <translation>보내지 않음: 모델의 컨텍스트 밖</translation>
    </message>
    <message>
        <source>Tool result: %1</source>
        <translation>도구 결과: %1</translation>
    </message>
    <message>
        <source>Tool result</source>
        <translation>도구 결과</translation>
    </message>
    <message>
        <source>Show less</source>
        <translation>접기</translation>
    </message>
    <message>
        <source>Show all</source>
        <translation>모두 보기</translation>
    </message>
    <message>
        <source>Tool call: %1</source>
        <translation>도구 호출: %1</translation>
    </message>
    <message>
        <source>Arguments: %1</source>
        <translation>인수: %1</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>이번만 허용</translation>
    </message>
    <message>
        <source>Allow this call of %1 once</source>
        <translation>%1 호출을 이번만 허용</translation>
    </message>
    <message>
        <source>Always allow</source>
        <translation>항상 허용</translation>
    </message>
    <message>
        <source>Always allow %1</source>
        <translation>%1 항상 허용</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>거부</translation>
    </message>
    <message>
        <source>Deny this call of %1</source>
        <translation>%1 호출 거부</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>실행 중…</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>완료</translation>
    </message>
    <message>
        <source>Image, %1 by %2 pixels</source>
        <translation>이미지, %1×%2 픽셀</translation>
    </message>
</context>
<context>
    <name>MessageContent</name>
    <message>
        <source>code</source>
        <translation>코드</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>복사됨</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>복사</translation>
    </message>
    <message>
        <source>Copy the %1 code</source>
        <translation>%1 코드 복사</translation>
    </message>
    <message>
        <source>Copy the code</source>
        <translation>코드 복사</translation>
    </message>
    <message>
        <source>Scroll the code sideways</source>
        <translation>코드를 옆으로 스크롤</translation>
    </message>
    <message>
        <source>Code: %1</source>
        <translation>코드: %1</translation>
    </message>
</context>
<context>
    <name>MessageList</name>
    <message>
        <source>Messages in pane %1</source>
        <translation>창 %1의 메시지 목록</translation>
    </message>
    <message>
        <source>Scroll messages</source>
        <translation>메시지 스크롤</translation>
    </message>
    <message>
        <source>Type the beginning of a text below and press Enter: this model has no chat format and continues what you write.</source>
        <translation>아래에 글의 첫머리를 입력하고 Enter를 누르세요. 이 모델은 대화 형식이 없어 입력한 글을 이어 씁니다.</translation>
    </message>
    <message>
        <source>Type a message below and press Enter.</source>
        <translation>아래에 메시지를 입력하고 Enter를 누르세요.</translation>
    </message>
</context>
<context>
    <name>ModelController</name>
    <message>
        <source>The engine settings were not applied: %1 The previous settings were restored.</source>
        <translation>엔진 설정이 적용되지 않았습니다: %1 이전 설정을 복원했습니다.</translation>
    </message>
    <message>
        <source>The saved KV cache size (%1 MiB) was too small for this model; it was set back to automatic. %2</source>
        <translation>저장된 KV 캐시 크기(%1 MiB)가 이 모델에 너무 작아 자동으로 되돌렸습니다. %2</translation>
    </message>
    <message>
        <source>%1 The model loaded before (%2) was loaded again.</source>
        <translation>%1 이전에 불러온 모델(%2)을 다시 불러왔습니다.</translation>
    </message>
    <message>
        <source>The model&apos;s chat template cannot be used as it is: %1</source>
        <translation>모델의 채팅 템플릿을 그대로 사용할 수 없습니다: %1</translation>
    </message>
    <message>
        <source>Warning from the engine: %1</source>
        <translation>엔진 경고: %1</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Model</source>
        <translation>모델</translation>
    </message>
    <message>
        <source>Open a model file</source>
        <translation>모델 파일 열기</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>모든 파일 (*)</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>모델 폴더 열기</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>%1 불러오는 중…</translation>
    </message>
    <message>
        <source>Loaded: %1</source>
        <translation>불러옴: %1</translation>
    </message>
    <message>
        <source>Not loaded: %1</source>
        <translation>불러오지 못함: %1</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>불러온 모델이 없습니다.</translation>
    </message>
    <message>
        <source>Model load progress</source>
        <translation>모델 불러오기 진행률</translation>
    </message>
    <message>
        <source>Open file…</source>
        <translation>파일 열기…</translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation>폴더 열기…</translation>
    </message>
    <message>
        <source>Unload</source>
        <translation>모델 내리기</translation>
    </message>
    <message>
        <source>Unload the model</source>
        <translation>모델 내리기</translation>
    </message>
    <message>
        <source>Stop every reply and free the model&apos;s memory</source>
        <translation>모든 응답을 중지하고 모델이 쓰던 메모리를 해제합니다</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>최근 모델</translation>
    </message>
    <message>
        <source>Remove missing</source>
        <translation>없는 항목 제거</translation>
    </message>
    <message>
        <source>Remove missing models from the list</source>
        <translation>목록에서 없어진 모델 제거</translation>
    </message>
    <message>
        <source>Load %1</source>
        <translation>%1 불러오기</translation>
    </message>
    <message>
        <source>%1 (missing)</source>
        <translation>%1 (없음)</translation>
    </message>
    <message>
        <source>%1 — missing</source>
        <translation>%1 — 없음</translation>
    </message>
    <message>
        <source>Remove %1 from the list</source>
        <translation>목록에서 %1 제거</translation>
    </message>
    <message>
        <source>No recent models yet.</source>
        <translation>최근 모델이 아직 없습니다.</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>닫기</translation>
    </message>
    <message>
        <source>Close the model picker</source>
        <translation>모델 선택 닫기</translation>
    </message>
    <message>
        <source>Download…</source>
        <translation>내려받기…</translation>
    </message>
    <message>
        <source>Download a model from Hugging Face</source>
        <translation>Hugging Face에서 모델 내려받기</translation>
    </message>
    <message>
        <source>Model files (*.gguf *.bin config.json *.safetensors)</source>
        <translation>모델 파일 (*.gguf *.bin config.json *.safetensors)</translation>
    </message>
</context>
<context>
    <name>OpenLinkDialog</name>
    <message>
        <source>Open this link?</source>
        <translation>이 링크를 열까요?</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Do not open the link</source>
        <translation>링크를 열지 않기</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>열기</translation>
    </message>
    <message>
        <source>Open the link</source>
        <translation>링크 열기</translation>
    </message>
    <message>
        <source>The link is in a message written by a model or a server. It opens in your browser or mail program and leads to:</source>
        <translation>이 링크는 모델이나 서버가 쓴 메시지에 있습니다. 브라우저나 메일 프로그램에서 열리며 다음 주소로 이동합니다:</translation>
    </message>
</context>
<context>
    <name>PaneBackendSection</name>
    <message>
        <source>Answered by</source>
        <translation>응답하는 곳</translation>
    </message>
    <message>
        <source>The model loaded in PagedChat</source>
        <translation>PagedChat에 불러온 모델</translation>
    </message>
    <message>
        <source>Server base URL</source>
        <translation>서버 기본 URL</translation>
    </message>
    <message>
        <source>Stored in the system keychain (type to replace)</source>
        <translation>시스템 키체인에 저장됨 (바꾸려면 입력)</translation>
    </message>
    <message>
        <source>API key (optional)</source>
        <translation>API 키 (선택)</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 키</translation>
    </message>
    <message>
        <source>Forget</source>
        <translation>삭제</translation>
    </message>
    <message>
        <source>Forget the stored API key</source>
        <translation>저장된 API 키 삭제</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>모델</translation>
    </message>
    <message>
        <source>List models</source>
        <translation>모델 목록</translation>
    </message>
    <message>
        <source>Ask the server for its models</source>
        <translation>서버에 모델 목록 요청</translation>
    </message>
    <message>
        <source>An OpenAI-compatible server</source>
        <translation>OpenAI 호환 서버</translation>
    </message>
    <message>
        <source>vLLM, llama-server, Ollama, another PagedChat: its base URL, the part before /chat/completions</source>
        <translation>vLLM, llama-server, Ollama, 다른 PagedChat: 기본 URL(/chat/completions 앞부분)을 적으세요</translation>
    </message>
    <message>
        <source>Choose a model file or folder.</source>
        <translation>모델 파일이나 폴더를 고르세요.</translation>
    </message>
    <message>
        <source>Another model on this computer</source>
        <translation>이 컴퓨터의 다른 모델</translation>
    </message>
    <message>
        <source>Loaded beside the main model while memory allows, with its own batch and KV cache; freed when no pane uses it.</source>
        <translation>메모리가 허락하는 동안 기본 모델과 함께 불러오며, 자체 배치와 KV 캐시를 씁니다. 이 모델을 쓰는 창이 없으면 해제합니다.</translation>
    </message>
    <message>
        <source>Model file or folder</source>
        <translation>모델 파일 또는 폴더</translation>
    </message>
    <message>
        <source> (loaded)</source>
        <translation> (불러옴)</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>찾아보기…</translation>
    </message>
    <message>
        <source>Choose a model file</source>
        <translation>모델 파일 고르기</translation>
    </message>
    <message>
        <source>Choose a model for this pane</source>
        <translation>이 창에서 쓸 모델 고르기</translation>
    </message>
    <message>
        <source>Model files (*.gguf *.bin config.json *.safetensors)</source>
        <translation>모델 파일 (*.gguf *.bin config.json *.safetensors)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>모든 파일 (*)</translation>
    </message>
</context>
<context>
    <name>PaneEndpoints</name>
    <message>
        <source>There is no pane %1.</source>
        <translation>%1번 창이 없습니다.</translation>
    </message>
    <message>
        <source>Choose a model: press List models and pick one of the server&apos;s models.</source>
        <translation>모델을 고르세요: 모델 목록을 누르고 서버의 모델 중 하나를 선택하세요.</translation>
    </message>
    <message>
        <source>%1 The API key is used until PagedChat quits, but not saved.</source>
        <translation>%1 API 키는 PagedChat을 끝낼 때까지 쓰이지만 저장되지 않습니다.</translation>
    </message>
    <message>
        <source>%1 Type the API key in the pane&apos;s settings again.</source>
        <translation>%1 창 설정에 API 키를 다시 입력하세요.</translation>
    </message>
    <message>
        <source>This URL is plain http: the API key and the conversation travel unencrypted to %1, readable by anyone on the way. Use https:// unless the network is yours.</source>
        <translation>이 URL은 암호화되지 않은 http입니다: API 키와 대화가 암호화되지 않은 채 %1(으)로 전송되어 중간의 누구나 읽을 수 있습니다. 직접 관리하는 네트워크가 아니라면 https://를 사용하세요.</translation>
    </message>
</context>
<context>
    <name>PaneHeader</name>
    <message>
        <source>Pane %1 conversation: %2</source>
        <translation>창 %1 대화: %2</translation>
    </message>
    <message>
        <source>Close pane %1</source>
        <translation>창 %1 닫기</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 토큰/초</translation>
    </message>
    <message>
        <source>Answer %1</source>
        <translation>답 %1</translation>
    </message>
    <message>
        <source>Blind compare</source>
        <translation>블라인드 비교</translation>
    </message>
    <message>
        <source>Settings of pane %1</source>
        <translation>창 %1 설정</translation>
    </message>
    <message>
        <source>Hidden until you vote</source>
        <translation>투표할 때까지 숨겨짐</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>설정</translation>
    </message>
    <message>
        <source>Close this pane (Ctrl+W)</source>
        <translation>이 창 닫기 (Ctrl+W)</translation>
    </message>
    <message>
        <source>Speed: %1</source>
        <translation>속도: %1</translation>
    </message>
    <message>
        <source>Context %1 / %2 (%3%)</source>
        <translation>컨텍스트 %1 / %2 (%3%)</translation>
    </message>
    <message>
        <source>Context almost full: %1</source>
        <translation>컨텍스트가 거의 찼습니다: %1</translation>
    </message>
    <message>
        <source>Context use: %1</source>
        <translation>컨텍스트 사용량: %1</translation>
    </message>
    <message>
        <source>Context use of pane %1</source>
        <translation>창 %1의 컨텍스트 사용량</translation>
    </message>
    <message>
        <source>Context — / %1</source>
        <translation>컨텍스트 — / %1</translation>
    </message>
    <message>
        <source>⇄ %1 at %2</source>
        <translation>⇄ %2의 %1</translation>
    </message>
    <message>
        <source>Answered by the server %1</source>
        <translation>서버 %1이(가) 응답</translation>
    </message>
    <message>
        <source>▣ %1</source>
        <translation>▣ %1</translation>
    </message>
    <message>
        <source>Answered by the model %1</source>
        <translation>%1 모델이 답함</translation>
    </message>
    <message>
        <source>drafts %1% · ×%2</source>
        <translation>초안 %1% · ×%2</translation>
    </message>
    <message>
        <source>Speculative decoding: the share of proposed draft tokens the model accepted, and the tokens one step gave on average</source>
        <translation>추측 디코딩: 제안된 초안 토큰 중 모델이 받아들인 비율과, 한 단계에서 평균으로 나온 토큰 수</translation>
    </message>
    <message>
        <source>Speculative decoding: %1</source>
        <translation>추측 디코딩: %1</translation>
    </message>
    <message>
        <source>MTP drafts %1% · ×%2</source>
        <translation>MTP 초안 %1% · ×%2</translation>
    </message>
</context>
<context>
    <name>PaneSettings</name>
    <message>
        <source>temperature %1 · top-p %2 · top-k %3 · min-p %4 · repetition %5 · max %6 tokens · seed %7</source>
        <translation>온도 %1 · top-p %2 · top-k %3 · min-p %4 · 반복 %5 · 최대 %6 토큰 · 시드 %7</translation>
    </message>
    <message>
        <source>off</source>
        <translation>끔</translation>
    </message>
    <message>
        <source>random</source>
        <translation>무작위</translation>
    </message>
    <message>
        <source>%1 must be a number.</source>
        <translation>%1은(는) 숫자여야 합니다.</translation>
    </message>
    <message>
        <source>%1 must be between %2 and %3.</source>
        <translation>%1은(는) %2에서 %3 사이여야 합니다.</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>온도</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation>반복 페널티</translation>
    </message>
    <message>
        <source>Top-k must be a whole number from 0 (off) to %1.</source>
        <translation>Top-k는 0(끔)부터 %1까지의 정수여야 합니다.</translation>
    </message>
    <message>
        <source>Max tokens must be a whole number from 1 to %1.</source>
        <translation>최대 토큰은 1부터 %1까지의 정수여야 합니다.</translation>
    </message>
    <message>
        <source>Seed must be &quot;random&quot; or a whole number of 0 or more.</source>
        <translation>시드는 &quot;random&quot;이거나 0 이상의 정수여야 합니다.</translation>
    </message>
    <message>
        <source> · reasoning %1</source>
        <translation> · 추론 %1</translation>
    </message>
    <message>
        <source>on</source>
        <translation>켬</translation>
    </message>
    <message>
        <source>low</source>
        <translation>낮음</translation>
    </message>
    <message>
        <source>medium</source>
        <translation>보통</translation>
    </message>
    <message>
        <source>high</source>
        <translation>높음</translation>
    </message>
    <message>
        <source>the model&apos;s default</source>
        <translation>모델 기본값</translation>
    </message>
    <message>
        <source>Reasoning must be on, off, low, medium, high or empty.</source>
        <translation>추론은 켬, 끔, 낮음, 보통, 높음 중 하나이거나 비어 있어야 합니다.</translation>
    </message>
    <message>
        <source>Tools must be on or off.</source>
        <translation>도구는 켜기 또는 끄기여야 합니다.</translation>
    </message>
    <message>
        <source>Speculative decoding must be on or off.</source>
        <translation>추측 디코딩은 켜기 또는 끄기여야 합니다.</translation>
    </message>
    <message>
        <source>Draft tokens must be auto, mtp, draft, ngram or off.</source>
        <translation>초안 토큰은 auto, mtp, draft, ngram, off 중 하나여야 합니다.</translation>
    </message>
    <message>
        <source>Tinting draft text must be on or off.</source>
        <translation>초안 텍스트 색 표시는 켜기 또는 끄기여야 합니다.</translation>
    </message>
</context>
<context>
    <name>PaneSettingsPopup</name>
    <message>
        <source>Settings of pane %1</source>
        <translation>창 %1 설정</translation>
    </message>
    <message>
        <source>Pane settings</source>
        <translation>창 설정</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>시스템 프롬프트</translation>
    </message>
    <message>
        <source>Instructions put before every conversation in this pane</source>
        <translation>이 창의 모든 대화 앞에 붙는 지시문</translation>
    </message>
    <message>
        <source>Temperature (0–2)</source>
        <translation>온도 (0–2)</translation>
    </message>
    <message>
        <source>Top-p (0.01–1)</source>
        <translation>Top-p (0.01–1)</translation>
    </message>
    <message>
        <source>Top-k (0 = off)</source>
        <translation>Top-k (0 = 끔)</translation>
    </message>
    <message>
        <source>Min-p (0–1)</source>
        <translation>Min-p (0–1)</translation>
    </message>
    <message>
        <source>Repetition penalty (0.5–2)</source>
        <translation>반복 페널티 (0.5–2)</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>최대 토큰</translation>
    </message>
    <message>
        <source>Seed (&quot;random&quot; or a number)</source>
        <translation>시드 (&quot;random&quot; 또는 숫자)</translation>
    </message>
    <message>
        <source>Defaults</source>
        <translation>기본값</translation>
    </message>
    <message>
        <source>Reset the sampling settings to the defaults</source>
        <translation>샘플링 설정을 기본값으로 되돌리기</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Close without changes</source>
        <translation>바꾸지 않고 닫기</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>적용</translation>
    </message>
    <message>
        <source>Apply the settings</source>
        <translation>설정 적용</translation>
    </message>
    <message>
        <source>Reasoning</source>
        <translation>추론</translation>
    </message>
    <message>
        <source>Reasoning: thinking on or off, or its effort</source>
        <translation>추론: 생각 켜기/끄기 또는 추론 강도</translation>
    </message>
    <message numerus="yes">
        <source>Offer the tools of Settings → Tools (%n tool(s))</source>
        <translation>
            <numerusform>설정 → 도구의 도구 제공 (도구 %n개)</numerusform>
        </translation>
    </message>
    <message>
        <source>Offer tools (none set up: Settings → Tools)</source>
        <translation>도구 제공 (설정된 도구 없음: 설정 → 도구)</translation>
    </message>
    <message>
        <source>Offer the tools of the server %1</source>
        <translation>서버 %1의 도구 제공</translation>
    </message>
    <message>
        <source>Draft tokens</source>
        <translation>초안 토큰</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>자동</translation>
    </message>
    <message>
        <source>Model&apos;s MTP layers</source>
        <translation>모델의 MTP 레이어</translation>
    </message>
    <message>
        <source>N-gram lookup</source>
        <translation>N-gram 조회</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>꺼짐</translation>
    </message>
    <message>
        <source>Draft tokens: who proposes them</source>
        <translation>초안 토큰: 누가 제안하는지</translation>
    </message>
    <message>
        <source>Draft model (Settings → Engine)</source>
        <translation>초안 모델 (설정 → 엔진)</translation>
    </message>
    <message>
        <source>Speculative decoding: draft tokens checked by the model in one step, so the same reply comes in fewer steps. The model&apos;s MTP layers (Qwen3.5/3.6 files that have them) guess from its own state; a draft model is a smaller model of the same vocabulary (set in Settings → Engine); n-gram lookup repeats earlier text of the conversation. Automatic takes MTP where the model has it.</source>
        <translation>추측 디코딩: 모델이 초안 토큰을 한 단계에서 검사하므로 같은 답이 더 적은 단계로 나옵니다. 모델의 MTP 레이어(이 레이어가 있는 Qwen3.5/3.6 파일)는 모델 자신의 상태로 추측하고, 초안 모델은 같은 어휘를 쓰는 더 작은 모델이며(설정 → 엔진에서 지정), N-gram 조회는 대화의 앞 텍스트를 되풀이합니다. 자동은 모델에 MTP가 있으면 MTP를 씁니다.</translation>
    </message>
    <message>
        <source>Tint the accepted draft text</source>
        <translation>채택된 초안 텍스트에 색 표시</translation>
    </message>
    <message>
        <source>Replies show the words that came from accepted draft tokens in another colour, while they stream and until the conversation is opened again.</source>
        <translation>답변에서 채택된 초안 토큰으로 만들어진 단어를 다른 색으로 보여 줍니다. 답변이 나오는 동안과 대화를 다시 열 때까지 표시됩니다.</translation>
    </message>
    <message>
        <source>Tool calls</source>
        <translation>도구 호출</translation>
    </message>
    <message>
        <source>The model decides</source>
        <translation>모델이 결정</translation>
    </message>
    <message>
        <source>Must call a tool</source>
        <translation>도구를 반드시 호출</translation>
    </message>
    <message>
        <source>Must call %1</source>
        <translation>%1 반드시 호출</translation>
    </message>
    <message>
        <source>Tool calls: whether the model must call a tool</source>
        <translation>도구 호출: 모델이 도구를 반드시 호출할지 여부</translation>
    </message>
    <message>
        <source>In its reply to each message the model calls a tool when it decides to, or must call one: its reply is then held to the tools&apos; parameters. Its replies to the tools&apos; results are its own.</source>
        <translation>각 메시지에 대한 답변에서 모델이 스스로 판단해 도구를 호출하거나, 반드시 호출하게 합니다. 이때 답변은 도구의 매개변수를 따르도록 제한됩니다. 도구 결과에 대한 답변은 모델이 자유롭게 합니다.</translation>
    </message>
    <message>
        <source>This model has no MTP layers: n-gram lookup proposes its drafts instead.</source>
        <translation>이 모델에는 MTP 레이어가 없어 n-gram 조회가 대신 초안을 제안합니다.</translation>
    </message>
    <message>
        <source>No draft model is loaded (Settings → Engine): n-gram lookup proposes the drafts instead.</source>
        <translation>초안 모델이 로드되지 않았습니다(설정 → 엔진). n-gram 조회가 대신 초안을 제안합니다.</translation>
    </message>
</context>
<context>
    <name>PaneState</name>
    <message>
        <source>New chat</source>
        <translation>새 대화</translation>
    </message>
    <message>
        <source>No model is loaded: %1</source>
        <translation>불러온 모델이 없습니다: %1</translation>
    </message>
    <message>
        <source>Not sent: %1 Your text is back in the input box.</source>
        <translation>보내지 못했습니다: %1 입력한 내용은 입력 칸에 다시 넣어 두었습니다.</translation>
    </message>
    <message>
        <source>Not continued: %1</source>
        <translation>이어 쓰지 못했습니다: %1</translation>
    </message>
    <message>
        <source>Not sent: %1</source>
        <translation>보내지 못했습니다: %1</translation>
    </message>
    <message>
        <source>No model is loaded. Open one with the Model button in the tool bar (Ctrl+O) to chat.</source>
        <translation>불러온 모델이 없습니다. 대화하려면 도구 모음의 모델 버튼(Ctrl+O)으로 모델을 여세요.</translation>
    </message>
    <message>
        <source>Not sent: %1 Your text is still in the input box.</source>
        <translation>보내지 못했습니다: %1 입력한 내용은 입력 칸에 그대로 있습니다.</translation>
    </message>
    <message>
        <source>No new answer: %1</source>
        <translation>새 답변을 만들지 못했습니다: %1</translation>
    </message>
    <message>
        <source>The tool calls were not run: %1</source>
        <translation>도구 호출을 실행하지 않았습니다: %1</translation>
    </message>
    <message>
        <source>Stopped: the model asked for more than %1 tool calls for one message (Settings → Tools sets the limit).</source>
        <translation>중지됨: 모델이 한 메시지에 도구 호출을 %1번보다 많이 요청했습니다 (한도는 설정 → 도구에서 정합니다).</translation>
    </message>
    <message>
        <source>The tool results were not saved: %1</source>
        <translation>도구 결과를 저장하지 못했습니다: %1</translation>
    </message>
    <message>
        <source>The image %1 cannot be opened: %2</source>
        <translation>이미지 %1을(를) 열 수 없습니다: %2</translation>
    </message>
    <message>
        <source>The image %1 is larger than 64 MiB.</source>
        <translation>이미지 %1이(가) 64 MiB보다 큽니다.</translation>
    </message>
    <message>
        <source>This model cannot read images: open it with its image projector (an mmproj file in the model&apos;s folder).</source>
        <translation>이 모델은 이미지를 읽지 못합니다. 이미지 프로젝터(모델 폴더의 mmproj 파일)와 함께 여세요.</translation>
    </message>
    <message numerus="yes">
        <source>At most %n images go with one message.</source>
        <translation>
            <numerusform>메시지 하나에는 이미지를 %n개까지 보낼 수 있습니다.</numerusform>
        </translation>
    </message>
    <message>
        <source>The image cannot be used: %1</source>
        <translation>이 이미지는 쓸 수 없습니다: %1</translation>
    </message>
    <message>
        <source>This model cannot read images. Remove them, or open the model with its image projector (an mmproj file in the model&apos;s folder).</source>
        <translation>이 모델은 이미지를 읽지 못합니다. 이미지를 빼거나, 이미지 프로젝터(모델 폴더의 mmproj 파일)와 함께 모델을 여세요.</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>이미지</translation>
    </message>
    <message>
        <source>The image %1 cannot be used: %2</source>
        <translation>이미지 %1은(는) 쓸 수 없습니다: %2</translation>
    </message>
</context>
<context>
    <name>ReasoningSection</name>
    <message numerus="yes">
        <source>Thinking… (%n character(s))</source>
        <translation>
            <numerusform>생각하는 중… (%n자)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Reasoning (%n character(s))</source>
        <translation>
            <numerusform>추론 (%n자)</numerusform>
        </translation>
    </message>
    <message>
        <source>Hide the reasoning: %1</source>
        <translation>추론 숨기기: %1</translation>
    </message>
    <message>
        <source>Show the reasoning: %1</source>
        <translation>추론 보기: %1</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>복사</translation>
    </message>
    <message>
        <source>Copy the reasoning</source>
        <translation>추론 복사</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>복사됨</translation>
    </message>
</context>
<context>
    <name>RecentModelsModel</name>
    <message>
        <source>random weights: %1</source>
        <translation>무작위 가중치: %1</translation>
    </message>
    <message>
        <source>cannot be read: %1</source>
        <translation>읽을 수 없음: %1</translation>
    </message>
    <message>
        <source>not supported: %1</source>
        <translation>지원하지 않음: %1</translation>
    </message>
    <message>
        <source>%1 B parameters</source>
        <translation>매개변수 %1B</translation>
    </message>
    <message>
        <source>%1 M parameters</source>
        <translation>매개변수 %1M</translation>
    </message>
    <message>
        <source>%1 K parameters</source>
        <translation>매개변수 %1K</translation>
    </message>
    <message>
        <source>context %1</source>
        <translation>컨텍스트 %1</translation>
    </message>
    <message>
        <source>no chat template</source>
        <translation>채팅 템플릿 없음</translation>
    </message>
    <message>
        <source>its own chat template</source>
        <translation>자체 채팅 템플릿</translation>
    </message>
    <message>
        <source>chat template %1</source>
        <translation>채팅 템플릿 %1</translation>
    </message>
</context>
<context>
    <name>RemoteChatBackend</name>
    <message>
        <source>Enter the endpoint&apos;s base URL, e.g. http://localhost:8000/v1.</source>
        <translation>엔드포인트의 기본 URL을 입력하세요 (예: http://localhost:8000/v1).</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not an http:// or https:// URL.</source>
        <translation>&apos;%1&apos;은(는) http:// 또는 https:// URL이 아닙니다.</translation>
    </message>
    <message>
        <source>&apos;%1&apos; names no host.</source>
        <translation>&apos;%1&apos;에 호스트가 없습니다.</translation>
    </message>
    <message>
        <source>No endpoint URL is set for this pane.</source>
        <translation>이 창에 엔드포인트 URL이 설정되지 않았습니다.</translation>
    </message>
    <message>
        <source>it sent an event that is not JSON</source>
        <translation>JSON이 아닌 이벤트를 보냈습니다</translation>
    </message>
    <message>
        <source>%1 stopped the answer: %2</source>
        <translation>%1이(가) 답변을 중단했습니다: %2</translation>
    </message>
    <message>
        <source>%1 stopped the answer before it was complete (it aborted the request; is it shutting down?).</source>
        <translation>%1이(가) 답변이 끝나기 전에 요청을 중단했습니다 (서버가 종료되는 중일 수 있습니다).</translation>
    </message>
    <message>
        <source>%1 answered HTTP %2 %3.</source>
        <translation>%1의 응답: HTTP %2 %3.</translation>
    </message>
    <message>
        <source>The connection to %1 ended before the answer was complete.</source>
        <translation>답변이 끝나기 전에 %1과(와)의 연결이 끊겼습니다.</translation>
    </message>
    <message>
        <source>%1 refused the request (HTTP %2 %3): %4 Check the API key in the pane&apos;s settings.</source>
        <translation>%1이(가) 요청을 거부했습니다 (HTTP %2 %3): %4 창 설정의 API 키를 확인하세요.</translation>
    </message>
    <message>
        <source>%1 answered HTTP %2 %3: %4</source>
        <translation>%1의 응답: HTTP %2 %3: %4</translation>
    </message>
    <message>
        <source>Cannot reach %1: the connection was refused (is the server running on that port?).</source>
        <translation>%1에 연결할 수 없습니다: 연결이 거부되었습니다 (그 포트에서 서버가 실행 중인가요?).</translation>
    </message>
    <message>
        <source>Cannot reach %1: the host name is unknown.</source>
        <translation>%1에 연결할 수 없습니다: 알 수 없는 호스트 이름입니다.</translation>
    </message>
    <message>
        <source>%1 sent nothing for %2 s; the request was stopped.</source>
        <translation>%1이(가) %2초 동안 아무것도 보내지 않아 요청을 중단했습니다.</translation>
    </message>
    <message>
        <source>TLS error with %1: %2</source>
        <translation>%1과(와)의 TLS 오류: %2</translation>
    </message>
    <message>
        <source>%1 closed the connection before the answer was complete.</source>
        <translation>답변이 끝나기 전에 %1이(가) 연결을 닫았습니다.</translation>
    </message>
    <message>
        <source>Network error with %1: %2</source>
        <translation>%1과(와)의 네트워크 오류: %2</translation>
    </message>
    <message>
        <source>%1 did not answer with an OpenAI model list.</source>
        <translation>%1이(가) OpenAI 모델 목록으로 응답하지 않았습니다.</translation>
    </message>
    <message>
        <source>%1 redirected the request to another server (%2); PagedChat did not follow it, so that your API key and messages stay with %1. Set the pane&apos;s URL to the server that answers.</source>
        <translation>%1이(가) 요청을 다른 서버(%2)로 리디렉션했습니다. API 키와 메시지가 %1에만 머물도록 PagedChat은 따라가지 않았습니다. 창의 URL을 실제로 응답하는 서버로 설정하세요.</translation>
    </message>
    <message>
        <source>another address</source>
        <translation>다른 주소</translation>
    </message>
</context>
<context>
    <name>SearchPanel</name>
    <message>
        <source>Search all chats</source>
        <translation>모든 채팅 검색</translation>
    </message>
    <message>
        <source>Search text</source>
        <translation>검색어</translation>
    </message>
    <message>
        <source>Close search</source>
        <translation>검색 닫기</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>검색 결과</translation>
    </message>
    <message>
        <source>Result in %1</source>
        <translation>%1의 검색 결과</translation>
    </message>
    <message>
        <source>No messages found.</source>
        <translation>찾은 메시지가 없습니다.</translation>
    </message>
</context>
<context>
    <name>ServerPage</name>
    <message>
        <source>Server</source>
        <translation>서버</translation>
    </message>
    <message>
        <source>Serve the loaded model over the OpenAI API</source>
        <translation>불러온 모델을 OpenAI API로 제공</translation>
    </message>
    <message>
        <source>Serving at %1 — requests share the engine&apos;s batch with the panes.</source>
        <translation>%1에서 제공 중 — 요청은 창들과 같은 엔진 배치에서 처리됩니다.</translation>
    </message>
    <message>
        <source>Starts once a model is loaded.</source>
        <translation>모델을 불러오면 시작합니다.</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>꺼짐</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>주소</translation>
    </message>
    <message>
        <source>Address to listen on</source>
        <translation>수신할 주소</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>포트</translation>
    </message>
    <message>
        <source>Port (0 = any free port)</source>
        <translation>포트 (0 = 비어 있는 아무 포트)</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 키</translation>
    </message>
    <message>
        <source>Server API key</source>
        <translation>서버 API 키</translation>
    </message>
    <message>
        <source>Restart with these settings</source>
        <translation>이 설정으로 다시 시작</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>시작</translation>
    </message>
    <message>
        <source>Allowed web pages</source>
        <translation>허용된 웹 페이지</translation>
    </message>
    <message>
        <source>Web pages allowed to call the server from a browser (origins, comma-separated)</source>
        <translation>브라우저에서 서버를 호출할 수 있는 웹 페이지 (출처, 쉼표로 구분)</translation>
    </message>
    <message>
        <source>Optional on this machine</source>
        <translation>이 컴퓨터에서는 선택 사항</translation>
    </message>
    <message>
        <source>None (e.g. http://localhost:3000)</source>
        <translation>없음 (예: http://localhost:3000)</translation>
    </message>
    <message>
        <source>Allow other machines</source>
        <translation>다른 컴퓨터 허용</translation>
    </message>
    <message>
        <source>Other machines need an address other than 127.0.0.1 and an API key, which clients send as a Bearer token. Browsers are refused unless their page is listed above.</source>
        <translation>다른 컴퓨터에서 쓰려면 127.0.0.1이 아닌 주소와 API 키가 필요합니다(클라이언트는 키를 Bearer 토큰으로 보냅니다). 브라우저는 위에 적은 페이지에서 온 요청만 받습니다.</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>설정</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>닫기</translation>
    </message>
    <message>
        <source>Close the settings</source>
        <translation>설정 닫기</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>설정 페이지</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>엔진</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message>
        <source>Loading %1…</source>
        <translation>%1 불러오는 중…</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>모델 없음</translation>
    </message>
    <message numerus="yes">
        <source>%n running</source>
        <translation>
            <numerusform>%n개 실행 중</numerusform>
        </translation>
    </message>
    <message>
        <source>idle</source>
        <translation>대기 중</translation>
    </message>
    <message>
        <source>Model: %1  ·  %2 tok/s  ·  %3</source>
        <translation>모델: %1  ·  %2 토큰/초  ·  %3</translation>
    </message>
    <message>
        <source>Engine status</source>
        <translation>엔진 상태</translation>
    </message>
    <message>
        <source>Model details</source>
        <translation>모델 정보</translation>
    </message>
    <message>
        <source>Data: %1</source>
        <translation>데이터: %1</translation>
    </message>
    <message>
        <source>Data folder</source>
        <translation>데이터 폴더</translation>
    </message>
    <message>
        <source>Model load progress</source>
        <translation>모델 불러오기 진행률</translation>
    </message>
    <message numerus="yes">
        <source>  ·  +%n other model(s)</source>
        <translation>
            <numerusform>  ·  다른 모델 %n개</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>StoreHealth</name>
    <message>
        <source>another program is using the chat history file</source>
        <translation>다른 프로그램이 대화 기록 파일을 사용 중입니다</translation>
    </message>
    <message>
        <source>the disk or the file is read-only</source>
        <translation>디스크 또는 파일이 읽기 전용입니다</translation>
    </message>
    <message>
        <source>the disk is full</source>
        <translation>디스크가 가득 찼습니다</translation>
    </message>
    <message>
        <source>the disk reported an error</source>
        <translation>디스크에서 오류가 발생했습니다</translation>
    </message>
    <message>
        <source>the file is damaged</source>
        <translation>파일이 손상되었습니다</translation>
    </message>
    <message>
        <source>the file or its folder cannot be opened</source>
        <translation>파일이나 그 폴더를 열 수 없습니다</translation>
    </message>
    <message>
        <source>it was written by a newer version of PagedChat</source>
        <translation>더 새로운 버전의 PagedChat에서 만든 파일입니다</translation>
    </message>
    <message>
        <source>an unexpected error occurred</source>
        <translation>예기치 않은 오류가 발생했습니다</translation>
    </message>
    <message>
        <source>The chat history could not be saved: %1.</source>
        <translation>대화 기록을 저장하지 못했습니다: %1.</translation>
    </message>
    <message>
        <source>The chat history could not be read: %1.</source>
        <translation>대화 기록을 읽지 못했습니다: %1.</translation>
    </message>
    <message>
        <source>PagedChat keeps what you wrote and tries again; nothing is lost while it stays open.</source>
        <translation>PagedChat이 작성한 내용을 보관하고 다시 시도합니다. 앱이 열려 있는 동안에는 아무것도 사라지지 않습니다.</translation>
    </message>
    <message>
        <source>The chat history file was damaged and could not be read. It was kept as %1; PagedChat started a new, empty chat history.</source>
        <translation>대화 기록 파일이 손상되어 읽을 수 없었습니다. 파일은 %1(으)로 보관했고, PagedChat은 비어 있는 새 대화 기록으로 시작했습니다.</translation>
    </message>
    <message>
        <source>The chat history can only be read: the disk or the file cannot be written. Your conversations are all here, but new messages cannot be sent or saved until it can be written again; PagedChat checks every few seconds.</source>
        <translation>대화 기록을 읽을 수만 있습니다: 디스크나 파일에 쓸 수 없습니다. 대화는 모두 그대로 있지만, 다시 쓸 수 있게 될 때까지 새 메시지를 보내거나 저장할 수 없습니다. PagedChat이 몇 초마다 다시 확인합니다.</translation>
    </message>
    <message>
        <source>PagedChat tries again.</source>
        <translation>PagedChat이 다시 시도합니다.</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>권한이 거부되었습니다</translation>
    </message>
    <message>
        <source>The chat history could not be opened: %1.</source>
        <translation>대화 기록을 열 수 없습니다: %1.</translation>
    </message>
    <message>
        <source>The chat history could not be opened.</source>
        <translation>대화 기록을 열 수 없습니다.</translation>
    </message>
</context>
<context>
    <name>ToolChoice</name>
    <message>
        <source>This pane must call a tool, and none is offered now (Settings → Tools, or the pane&apos;s servers), or none has parameters the model can be held to.</source>
        <translation>이 창은 도구를 반드시 호출해야 하지만 지금 제공되는 도구가 없거나(설정 → 도구, 또는 창의 서버), 모델이 따르도록 강제할 수 있는 매개변수를 가진 도구가 없습니다.</translation>
    </message>
    <message>
        <source>This pane must call the tool %1, which is not offered now (or whose parameters the model cannot be held to).</source>
        <translation>이 창은 도구 %1을(를) 호출해야 하지만, 지금 제공되지 않거나 모델이 그 매개변수를 따르도록 강제할 수 없습니다.</translation>
    </message>
</context>
<context>
    <name>ToolHost</name>
    <message>
        <source>No file was named.</source>
        <translation>파일을 지정하지 않았습니다.</translation>
    </message>
    <message>
        <source>%1 is too large for a servers file.</source>
        <translation>%1은(는) 서버 파일로 쓰기에 너무 큽니다.</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>%1을(를) 읽을 수 없습니다: %2</translation>
    </message>
    <message>
        <source>%1 is empty.</source>
        <translation>%1이(가) 비어 있습니다.</translation>
    </message>
    <message>
        <source>%1 in server &quot;%2&quot; says it is kept in the keychain, but nothing is kept for it: type the value again.</source>
        <translation>서버 &quot;%2&quot;의 %1은(는) 키체인에 보관되어 있다고 되어 있지만 보관된 값이 없습니다: 값을 다시 입력하세요.</translation>
    </message>
    <message>
        <source>The servers&apos; env and headers are kept in pagedchat.ini: the keychain cannot be used (%1).</source>
        <translation>서버의 env와 headers는 pagedchat.ini에 보관됩니다: 키체인을 쓸 수 없습니다 (%1).</translation>
    </message>
    <message>
        <source>nothing is kept in the keychain for it</source>
        <translation>키체인에 보관된 값이 없습니다</translation>
    </message>
    <message>
        <source>its env and headers could not be read from the keychain: %1</source>
        <translation>키체인에서 env와 headers를 읽을 수 없습니다: %1</translation>
    </message>
</context>
<context>
    <name>ToolsPage</name>
    <message>
        <source>Tools</source>
        <translation>도구</translation>
    </message>
    <message>
        <source>MCP servers give models tools. Paste an &quot;mcpServers&quot; document (as in claude_desktop_config.json) or read one from a file. Each call is shown in the chat and runs only once you allow it.</source>
        <translation>MCP 서버는 모델에 도구를 제공합니다. &quot;mcpServers&quot; 문서(claude_desktop_config.json과 같은 형식)를 붙여 넣거나 파일에서 읽으세요. 각 호출은 채팅에 표시되며 허용해야만 실행됩니다.</translation>
    </message>
    <message>
        <source>MCP servers document (JSON)</source>
        <translation>MCP 서버 문서 (JSON)</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>적용</translation>
    </message>
    <message>
        <source>Apply the MCP servers document</source>
        <translation>MCP 서버 문서 적용</translation>
    </message>
    <message>
        <source>File to read the servers from</source>
        <translation>서버를 읽어 올 파일</translation>
    </message>
    <message>
        <source>Read file</source>
        <translation>파일 읽기</translation>
    </message>
    <message>
        <source>Read the servers from the file</source>
        <translation>파일에서 서버 읽기</translation>
    </message>
    <message numerus="yes">
        <source>%1: ready, %n tool(s)</source>
        <translation>
            <numerusform>%1: 준비됨, 도구 %n개</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: starting…</source>
        <translation>%1: 시작 중…</translation>
    </message>
    <message>
        <source>%1: failed: %2</source>
        <translation>%1: 실패: %2</translation>
    </message>
    <message>
        <source>Tool calls per message, at most</source>
        <translation>메시지당 최대 도구 호출 수</translation>
    </message>
    <message>
        <source>The values of &quot;env&quot; and &quot;headers&quot; (tokens, keys) go to the system keychain; the document shows &quot;(in the keychain)&quot; in their place, which keeps them when you apply it again.</source>
        <translation>&quot;env&quot;와 &quot;headers&quot;의 값(토큰, 키)은 시스템 키체인에 보관됩니다. 문서에는 그 자리에 &quot;(in the keychain)&quot;이 표시되며, 그대로 다시 적용하면 값이 유지됩니다.</translation>
    </message>
    <message numerus="yes">
        <source>Ask again for every tool (%n always allowed)</source>
        <translation>
            <numerusform>모든 도구를 다시 묻기 (항상 허용 %n개)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>UnsavedQuitDialog</name>
    <message>
        <source>Quit without saving?</source>
        <translation>저장하지 않고 종료할까요?</translation>
    </message>
    <message>
        <source>Keep PagedChat open</source>
        <translation>PagedChat 계속 열어 두기</translation>
    </message>
    <message>
        <source>Quit anyway</source>
        <translation>그래도 종료</translation>
    </message>
    <message>
        <source>Some of your changes (a reply, a new title, a pin) are not saved in the chat history yet. If PagedChat quits now, they are lost; while it stays open, it keeps trying to save them.</source>
        <translation>변경 내용 일부(답변, 새 제목, 고정)가 아직 대화 기록에 저장되지 않았습니다. 지금 PagedChat을 종료하면 사라집니다. 열어 두는 동안에는 계속 저장을 시도합니다.</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>PagedChat could not open its chat data.</source>
        <translation>PagedChat에서 대화 데이터를 열 수 없습니다.</translation>
    </message>
    <message>
        <source>Check that folder, or start PagedChat with --data-dir DIR to use another one.</source>
        <translation>해당 폴더를 확인하거나, --data-dir DIR 옵션으로 다른 폴더를 지정해 PagedChat을 시작하세요.</translation>
    </message>
    <message>
        <source>Open it with the newer PagedChat that wrote it; this version leaves the file as it is. To start this version with another, empty history, start it with --data-dir DIR.</source>
        <translation>이 파일을 만든 새 버전의 PagedChat으로 여세요. 이 버전은 파일을 그대로 둡니다. 이 버전을 비어 있는 다른 기록으로 시작하려면 --data-dir DIR 옵션으로 시작하세요.</translation>
    </message>
</context>
</TS>
